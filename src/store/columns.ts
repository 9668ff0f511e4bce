// A core object's fields as a table row's columns: each field under its snake_case name, except the two
// whose column says more (`version` → experiment_version, `hour` → the hourly tables' `bucket`).
const RENAMED: Readonly<Record<string, string>> = { version: 'experiment_version', hour: 'bucket' };

/** The column a field is stored in: `variantKey` → variant_key, `sumX2` → sum_x2, `sumXY` → sum_xy. */
export const columnOf = (field: string): string =>
  RENAMED[field] ?? field.replace(/[A-Z]+/g, (caps) => `_${caps.toLowerCase()}`);

/**
 * A function making rows of `fields` (in that order: a statement's rows all share one key order), with
 * the column names worked out once. `defaults` are fields read as `?? null` (optional ones).
 *
 * The row is an object literal compiled once per shape (the names are this module's constants, never
 * input): V8 gives every row one hidden class, where adding computed keys one by one made dictionary-mode
 * objects that cost ~15 µs per rollup statement to build and read (issue 37).
 */
export function rowsOf<T extends object>(
  fields: ReadonlyArray<keyof T & string>,
  nullable: ReadonlyArray<keyof T & string> = [],
): (item: T) => Record<string, unknown> {
  const entries = [
    ...fields.map((f) => `${JSON.stringify(columnOf(f))}: item[${JSON.stringify(f)}]`),
    ...nullable.map((f) => `${JSON.stringify(columnOf(f))}: item[${JSON.stringify(f)}] ?? null`),
  ];
  return new Function('item', `return { ${entries.join(', ')} };`) as (item: T) => Record<string, unknown>;
}
