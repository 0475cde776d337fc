-- The control tables of a PostgreSQL dataset. Each published dataset version is a generation: a
-- schema hsds_g<id> holding its tables (see generation-schema.ts), built by one publish. `live`
-- names the generation being served; switching it is what publishing a version means.
CREATE TABLE hsds.generations (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- Layout of the generation's tables (STORE_FORMAT, src/store/tables.ts, when it was built).
  format integer NOT NULL,
  version text NOT NULL,
  published_at text NOT NULL,
  organizations integer NOT NULL,
  taxonomies integer NOT NULL,
  taxonomy_terms integer NOT NULL,
  oldest_modified text COLLATE "C",
  newest_modified text COLLATE "C",
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE hsds.live (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  generation bigint REFERENCES hsds.generations (id),
  -- Kept until the next publish, for requests still reading it on other instances.
  previous bigint REFERENCES hsds.generations (id)
);

INSERT INTO hsds.live (only_row) VALUES (true);
