package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/textcell"
)

const migrateHelp = `Create the ClickHouse database and tables, or upgrade them to this version's schema.
Safe to run again and from two jobs at once; a migration interrupted half-way is completed by the
next run. The DSN comes from --dsn, else clickhouse.dsn of the config (GPUCOST_CLICKHOUSE_DSN),
by default the local server of 'make clickhouse' (` + store.DefaultDSN + `).

With --cluster NAME (or clickhouse.cluster), the same migrations create, ON CLUSTER NAME,
replicated local tables (TABLE_local, Replicated*MergeTree) and Distributed tables under the
usual names, which every gpucost command then reads and writes. The servers need the cluster in
remote_servers, {shard} and {replica} macros, and ZooKeeper or ClickHouse Keeper
(deploy/clickhouse-cluster has a 2 × 2 example).

--output table prints a line per migration applied and the schema version; json and csv the
same as one record: database, schema_version, clickhouse_version, applied (a list; in CSV
joined by ';'). json holds it in an envelope (gpucost.databases/v1) as its one item, its query
the cluster asked for (the DSN is not echoed: it may hold a password).`

// migration is what migrate did, as --output json and csv write it.
type migration struct {
	Database          string   `json:"database"`
	SchemaVersion     int      `json:"schema_version"`
	ClickHouseVersion string   `json:"clickhouse_version"`
	Applied           []string `json:"applied"`
}

func migrateCommand(e env) *cobra.Command {
	var (
		cf           configFlag
		dsn, cluster string
		output       string
		outputCheck  func() error
	)
	cmd := &cobra.Command{
		Use:   "migrate [--dsn DSN] [--cluster NAME]",
		Short: "create or upgrade the ClickHouse schema",
		Long:  migrateHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputCheck(); err != nil {
				return err
			}
			cfg, err := cf.load(e)
			if err != nil {
				return err
			}
			if dsn != "" {
				cfg.ClickHouse.DSN = dsn
			}
			if cluster != "" {
				cfg.ClickHouse.Cluster = cluster
			}
			s, err := openStore(cmd.Context(), cfg.ClickHouse, store.Options{Logger: newLogger(e.stderr, cfg.Log)})
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.Migrate(cmd.Context())
			if err != nil {
				return err
			}
			m := migration{Database: s.Database(), SchemaVersion: res.Current, ClickHouseVersion: s.ServerVersion(), Applied: res.Applied}
			if m.Applied == nil {
				m.Applied = []string{}
			}
			if output == "json" {
				return export.WriteJSON(e.stdout, export.Envelope[migration]{Schema: export.DatabasesSchema, Query: migrateQuery{Cluster: cfg.ClickHouse.Cluster},
					Items: []migration{m}})
			}
			return writeMigration(e.stdout, output, m)
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVar(&dsn, "dsn", "", "ClickHouse DSN, clickhouse://user:password@host:9000/database (default clickhouse.dsn)")
	cmd.Flags().StringVar(&cluster, "cluster", "", "create the schema on this ClickHouse cluster (default clickhouse.cluster)")
	outputCheck = outputFlag(cmd, &output, "table", "json", "csv")
	return cmd
}

// migrateQuery is what gpucost migrate --output json echoes of its request.
type migrateQuery struct {
	Cluster string `json:"cluster"` // --cluster, else clickhouse.cluster; "" for one server
}

// writeMigration writes what migrate did as a table or CSV.
func writeMigration(w io.Writer, output string, m migration) error {
	switch output {
	case "csv":
		c := textcell.NewCSVWriter(w)
		if err := c.Write([]string{"database", "schema_version", "clickhouse_version", "applied"}); err != nil {
			return err
		}
		if err := c.Write([]string{m.Database, strconv.Itoa(m.SchemaVersion), m.ClickHouseVersion, strings.Join(m.Applied, ";")}); err != nil {
			return err
		}
		return c.Flush()
	}
	for _, name := range m.Applied {
		fmt.Fprintf(w, "applied %s\n", name)
	}
	state := "is up to date (schema version %d, ClickHouse %s)"
	if len(m.Applied) > 0 {
		state = "is at schema version %d (ClickHouse %s)"
	}
	_, err := fmt.Fprintf(w, "database %s "+state+"\n", m.Database, m.SchemaVersion, m.ClickHouseVersion)
	return err
}
