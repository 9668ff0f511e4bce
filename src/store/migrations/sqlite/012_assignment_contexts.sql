-- 012 results carry what was said about them (issue 26): the context each assignment was made with, by
-- the assignment id's UUID, so a page of results reads its assignments' contexts in one indexed query
-- (exposure batches are JSON arrays, not searchable by id). Written with the exposure, only when it has a
-- context. Filled here from the exposures already stored (both stored forms and the legacy rows).
CREATE TABLE assignment_contexts (
  experiment_id INTEGER NOT NULL,
  assignment_uuid TEXT NOT NULL,
  context TEXT NOT NULL,
  PRIMARY KEY (experiment_id, assignment_uuid)
);
INSERT OR IGNORE INTO assignment_contexts (experiment_id, assignment_uuid, context)
SELECT b.experiment_id, substr(json_extract(e.value, '$[0]'), 1, 36),
  CASE json_array_length(e.value) WHEN 4 THEN json_extract(e.value, '$[3].context') ELSE json_extract(e.value, '$[3]') END
FROM exposure_batches b, json_each(b.exposures) e
WHERE (json_array_length(e.value) = 5 AND json_type(e.value, '$[3]') = 'object')
   OR (json_array_length(e.value) = 4 AND json_type(e.value, '$[3].context') = 'object');
INSERT OR IGNORE INTO assignment_contexts (experiment_id, assignment_uuid, context)
SELECT experiment_id, substr(assignment_id, 1, 36), context FROM exposures WHERE context IS NOT NULL;
