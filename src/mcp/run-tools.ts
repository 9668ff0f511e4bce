// The offline tools (issue 40): the datasets there are, the runs of an experiment, and a run's paired
// comparison with its verdict first. All read-only; running variants over a dataset is the clients' job
// (runDataset / run_dataset), since it calls the agent itself.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod/v4';
import { formatDifference, formatDifferenceInterval, formatP } from '../answers/format.js';
import { comparisonMark, type RunComparison } from '../answers/run-comparison.js';
import { type Call, ok, run, Slug, send, slugPart } from './tool-kit.js';

/** The verdict, then one line a metric and variant: difference [interval], p (Holm), wins/ties/losses. */
export function comparisonText(c: RunComparison): string {
  const lines = [c.verdict.summary, `control ${c.control}; ${c.items} items in every variant`];
  for (const metric of c.metrics) {
    for (const v of metric.comparisons) {
      const d = v.difference;
      const ci = formatDifferenceInterval(d.ci ?? undefined, metric.kind);
      lines.push(
        `${metric.name} ${v.variant}: ${formatDifference(d.estimate, metric.kind)} ${ci}, ` +
          `p ${formatP(v.adjustedPValue)} (Holm), ${v.wins} wins / ${v.ties} ties / ${v.losses} losses ` +
          `over ${v.items} items: ${comparisonMark(v)}`,
      );
    }
  }
  return lines.join('\n');
}

/** '?limit=&cursor=' of a paged listing ('' without either). */
function page(limit: number | undefined, cursor: string | undefined): string {
  const q = new URLSearchParams();
  if (limit !== undefined) q.set('limit', String(limit));
  if (cursor !== undefined) q.set('cursor', cursor);
  return q.size > 0 ? `?${q}` : '';
}

export function registerRunTools(server: McpServer, call: Call): void {
  const read = { readOnlyHint: true, openWorldHint: false } as const;

  server.registerTool(
    'list_datasets',
    {
      title: 'List datasets',
      description:
        'The datasets offline runs answer (name, description, current version, item count, when it last ' +
        "changed), oldest first. Paged: pass the answer's nextCursor as cursor. Needs a read key.",
      inputSchema: {
        limit: z.number().int().min(1).max(100).optional().describe('At most this many (default 50)'),
        cursor: z.string().optional().describe("The previous answer's nextCursor"),
      },
      annotations: read,
    },
    ({ limit, cursor }) => run(async () => ok(await send(call, 'GET', `/datasets${page(limit, cursor)}`))),
  );

  server.registerTool(
    'list_runs',
    {
      title: "List an experiment's offline runs",
      description:
        'The offline runs of an experiment, newest first: id, dataset and version, variants, trials, items. ' +
        "Paged: pass the answer's nextCursor as cursor. Pass a run id to get_run_comparison. Needs a read key.",
      inputSchema: {
        slug: Slug,
        limit: z.number().int().min(1).max(100).optional().describe('At most this many (default 50)'),
        cursor: z.string().optional().describe("The previous answer's nextCursor (older runs)"),
      },
      annotations: read,
    },
    ({ slug, limit, cursor }) =>
      run(async () =>
        ok(await send(call, 'GET', `/experiment/${slugPart(slug)}/runs${page(limit, cursor)}`)),
      ),
  );

  server.registerTool(
    'get_run_comparison',
    {
      title: "Compare an offline run's variants",
      description:
        'An offline run (every variant over the same dataset items) compared in pairs, item by item: first ' +
        'the verdict sentence, then per metric and variant the mean difference against the control with ' +
        'its paired t interval, the Holm-adjusted p-value across metrics and wins/ties/losses; the whole ' +
        'answer (Wilcoxon, bootstrap, McNemar, variance shares, items needed, the items that changed most) ' +
        'as structured content. Needs a read key.',
      inputSchema: {
        run: z.string().min(1).describe("The run's id (list_runs)"),
        control: z
          .string()
          .optional()
          .describe("The variant the others are compared with (default: the run's first)"),
        metrics: z.string().optional().describe('Comma-separated metric names (default: all)'),
        alpha: z.number().gt(0).max(0.5).optional().describe('Significance level (default 0.05)'),
      },
      annotations: read,
    },
    ({ run: id, ...rest }) =>
      run(async () => {
        const q = new URLSearchParams();
        for (const [k, v] of Object.entries(rest)) if (v !== undefined) q.set(k, String(v));
        const path = `/runs/${encodeURIComponent(id)}/comparison${q.size > 0 ? `?${q}` : ''}`;
        const comparison = await send(call, 'GET', path);
        return ok(comparison, comparisonText(comparison as RunComparison));
      }),
  );
}
