// Owns the type declaration of the part of jstat (an untyped CommonJS package) that the stats module uses.
declare module 'jstat' {
  interface JStat {
    normal: { inv(p: number, mean: number, std: number): number };
    studentt: { inv(p: number, dof: number): number };
  }
  const jStat: JStat;
  export default jStat;
}
