-- 012 results carry what was said about them (issue 26): the context each assignment was made with, by
-- the assignment id's UUID, so a page of results reads its assignments' contexts in one indexed query
-- (exposure batches are JSON arrays, not searchable by id). Written with the exposure, only when it has a
-- context. Filled here from the exposures already stored (both stored forms and the legacy rows).
CREATE TABLE assignment_contexts (
  experiment_id BIGINT NOT NULL,
  assignment_uuid TEXT NOT NULL,
  context TEXT NOT NULL,
  PRIMARY KEY (experiment_id, assignment_uuid)
);
INSERT INTO assignment_contexts (experiment_id, assignment_uuid, context)
SELECT b.experiment_id, substr(e.value ->> 0, 1, 36),
  CASE json_array_length(e.value) WHEN 4 THEN (e.value -> 3 -> 'context')::text ELSE (e.value -> 3)::text END
FROM exposure_batches b, json_array_elements(b.exposures::json) e
WHERE (json_array_length(e.value) = 5 AND json_typeof(e.value -> 3) = 'object')
   OR (json_array_length(e.value) = 4 AND json_typeof(e.value -> 3 -> 'context') = 'object')
ON CONFLICT DO NOTHING;
INSERT INTO assignment_contexts (experiment_id, assignment_uuid, context)
SELECT experiment_id, substr(assignment_id, 1, 36), context::text FROM exposures WHERE context IS NOT NULL
ON CONFLICT DO NOTHING;
