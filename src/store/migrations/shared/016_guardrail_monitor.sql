-- 016 the guardrail monitor (issue 27): what each experiment asks of it, and what it last saw of each.
ALTER TABLE experiments ADD COLUMN guardrail_action TEXT NOT NULL DEFAULT 'notify';
ALTER TABLE experiments ADD COLUMN minimum_units INTEGER NOT NULL DEFAULT 100;

-- One row per experiment the monitor judged (by the experiments' internal id, never reused): its last
-- findings (verdict status, sample-ratio mismatch, failing guardrails), so a finding is raised once per
-- change, whichever instance runs the next round.
CREATE TABLE monitor_states (
  experiment_id {{bigint}} PRIMARY KEY,
  state {{json}} NOT NULL,
  updated_at {{time}} NOT NULL
);
