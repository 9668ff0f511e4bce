// Owns the type declaration of the part of jstat (an untyped CommonJS package) that the stats module uses.
declare module 'jstat' {
  interface JStat {
    normal: { inv(p: number, mean: number, std: number): number; sample(mean: number, std: number): number };
    studentt: { inv(p: number, dof: number): number };
    chisquare: { sample(dof: number): number };
    poisson: { sample(l: number): number };
    /** Replaces Math.random as the source of jstat's samples. */
    setRandom(fn: () => number): void;
  }
  const jStat: JStat;
  export default jStat;
}
