-- 030 datasets (issue 40, ADR 0046): named, versioned lists of items (an input, what is expected, metadata)
-- that offline runs answer. A dataset's row holds its current version and item count. Items are never
-- changed in place: a row holds one item's content from the version that added or changed it
-- (`added_in`) until the version that replaced or removed it (`removed_in`, null while current), so any
-- version reads exactly: added_in <= v AND (removed_in IS NULL OR removed_in > v). `position` is the
-- order the item was first added (kept when it changes); JSON is stored as sent, as text.
CREATE TABLE datasets (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  version INTEGER NOT NULL,
  items INTEGER NOT NULL,
  created_at {{time}} NOT NULL,
  updated_at {{time}} NOT NULL
);
CREATE INDEX datasets_created ON datasets (created_at, id);
CREATE TABLE dataset_items (
  dataset_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  added_in INTEGER NOT NULL,
  removed_in INTEGER,
  position {{bigint}} NOT NULL,
  input TEXT NOT NULL,
  expected TEXT,
  metadata TEXT,
  PRIMARY KEY (dataset_id, item_id, added_in)
);
CREATE INDEX dataset_items_order ON dataset_items (dataset_id, position);
