-- 009 nothing lost, nothing twice (issue 24): the assignment ids whose exposures clients sent through
-- POST /exposures, by the id's UUID (the FNV and the CRC-32 form of one assignment are one id), so that
-- however often one is sent it is stored once. Assign's own ids are unique by construction and carry
-- the server's check: they are never written here.
CREATE TABLE exposure_ids (
  experiment_id {{bigint}} NOT NULL,
  assignment_uuid TEXT NOT NULL,
  PRIMARY KEY (experiment_id, assignment_uuid)
);
