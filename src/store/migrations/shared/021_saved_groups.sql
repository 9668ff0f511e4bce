-- 021 saved groups (issue 35, ADR 0038): named lists of unit ids that conditions name with $inGroup /
-- $notInGroup. `values` holds the whole list as one JSON array (up to 100,000 strings or numbers): it is
-- always read and written whole, and held in memory as a Set. `size` is its length, so a listing need not
-- count. "values" is quoted: it is a reserved word in both dialects.
CREATE TABLE saved_groups (
  key TEXT PRIMARY KEY,
  description TEXT NOT NULL DEFAULT '',
  "values" {{json}} NOT NULL,
  size INTEGER NOT NULL,
  created_at {{time}} NOT NULL,
  updated_at {{time}} NOT NULL
);
