// A core object's fields as a table row's columns: each field under its snake_case name, except the two
// whose column says more (`version` → experiment_version, `hour` → the hourly tables' `bucket`).
const RENAMED: Readonly<Record<string, string>> = { version: 'experiment_version', hour: 'bucket' };

/** The column a field is stored in: `variantKey` → variant_key, `sumX2` → sum_x2, `sumXY` → sum_xy. */
export const columnOf = (field: string): string =>
  RENAMED[field] ?? field.replace(/[A-Z]+/g, (caps) => `_${caps.toLowerCase()}`);

/**
 * A function making rows of `fields` (in that order: a statement's rows all share one key order), with
 * the column names worked out once.
 */
export function rowsOf<T extends object>(
  fields: ReadonlyArray<keyof T & string>,
): (item: T) => Record<string, unknown> {
  const pairs = fields.map((f) => [columnOf(f), f] as const);
  return (item) => {
    const row: Record<string, unknown> = {};
    for (const [column, field] of pairs) row[column] = item[field];
    return row;
  };
}
