// Messages between the main thread and the SQLite writer thread.

export type WriterRequest =
  | { id: number; type: 'query'; sql: string; parameters: readonly unknown[] }
  | { id: number; type: 'exec'; sql: string }
  /** A whole group-commit batch: each statement run once per parameter list, all in one transaction. */
  | { id: number; type: 'batch'; statements: ReadonlyArray<BatchStatement> }
  | { id: number; type: 'close' };

export type WriterResponse =
  | { id: number; ok: true; rows?: unknown[]; changes?: number; lastInsertRowid?: number }
  | { id: number; ok: false; message: string; code?: string };

/** One statement of a batch, run once per parameter list; with `tally`, see store/compile-rows.ts. */
export interface BatchStatement {
  sql: string;
  rows: readonly unknown[][];
  tally?: string;
}
