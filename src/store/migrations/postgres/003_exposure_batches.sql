-- 003 exposure batches: the exposures one write batch holds for one experiment version are one row,
-- a JSON array of [assignmentId, variantKey, userId, context, createdAt] in assignment order (see the
-- SQLite migration and ADR 0006). Text, not jsonb: it is written once and read back whole.
CREATE TABLE exposure_batches (
  seq BIGSERIAL PRIMARY KEY,
  experiment_id BIGINT NOT NULL,
  experiment_version INTEGER NOT NULL,
  count INTEGER NOT NULL,
  exposures TEXT NOT NULL
);
CREATE INDEX exposure_batches_by_experiment ON exposure_batches (experiment_id, seq);

INSERT INTO exposure_batches (experiment_id, experiment_version, count, exposures)
SELECT experiment_id, experiment_version, count(*),
       json_agg(
         json_build_array(
           assignment_id, variant_key, user_id, context,
           to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
         ) ORDER BY seq
       )::text
FROM exposures
GROUP BY experiment_id, experiment_version, seq / 1000
ORDER BY min(seq);

DROP TABLE exposures;
