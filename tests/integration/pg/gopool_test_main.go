// Go's pools against leasegate's PostgreSQL port, or any server given by
// PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE: database/sql with lib/pq
// (Debian's golang-github-lib-pq-dev) and pgx v4's pgxpool (Debian's
// golang-github-jackc-pgx-v4-dev), built offline in GOPATH mode. A session
// lock is taken on a connection pinned with db.Conn / pool.Acquire (a
// pool's other connections are other sessions); a transaction lock in
// BeginTx / pool.Begin. Prints one `ok`/`not ok` line per check.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"reflect"
	"time"

	"github.com/jackc/pgx/v4/pgxpool"
	_ "github.com/lib/pq"
)

const K = 7300 // this program's keys: 7300..7319

var failed bool

func check(what string, got, want interface{}, err error) {
	if err == nil && reflect.DeepEqual(got, want) {
		fmt.Printf("ok %s\n", what)
		return
	}
	failed = true
	fmt.Printf("not ok %s: got %v, want %v (err %v)\n", what, got, want, err)
}

func libpq(ctx context.Context) {
	dsn := fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=%s sslmode=disable",
		os.Getenv("PGHOST"), os.Getenv("PGPORT"), os.Getenv("PGUSER"),
		os.Getenv("PGPASSWORD"), os.Getenv("PGDATABASE"))
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		check("lib/pq: sql.Open", nil, nil, err)
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(4)
	check("lib/pq: db.PingContext", nil, nil, db.PingContext(ctx))
	a, err := db.Conn(ctx)
	if err != nil {
		check("lib/pq: db.Conn", nil, nil, err)
		return
	}
	var void string
	err = a.QueryRowContext(ctx, "SELECT pg_advisory_lock($1)", K).Scan(&void)
	check("lib/pq: pg_advisory_lock($1) on a pinned db.Conn", void, "", err)
	var ok bool
	err = db.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", K).Scan(&ok)
	check("lib/pq: the pool's other connection is refused it", ok, false, err)
	err = a.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", K).Scan(&ok)
	check("lib/pq: pg_advisory_unlock", ok, true, err)
	a.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err == nil {
		err = tx.QueryRowContext(ctx, "SELECT pg_try_advisory_xact_lock($1)", K+1).Scan(&ok)
		check("lib/pq: pg_try_advisory_xact_lock in BeginTx", ok, true, err)
		err = db.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", K+1).Scan(&ok)
		check("lib/pq: ... held against the pool's others", ok, false, err)
		check("lib/pq: Commit", nil, nil, tx.Commit())
	} else {
		check("lib/pq: BeginTx", nil, nil, err)
	}
	var n int
	err = db.QueryRowContext(ctx, "SELECT 1").Scan(&n)
	check("lib/pq: SELECT 1", n, 1, err)
	db.SetMaxOpenConns(1) // one session from here: the xact lock must be gone
	err = db.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", K+1).Scan(&ok)
	check("lib/pq: the xact lock went at Commit", ok, true, err)
	db.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", K+1).Scan(&ok)
}

func pgxPool(ctx context.Context) {
	cfg, err := pgxpool.ParseConfig("") // PG* from the environment
	if err != nil {
		check("pgxpool: ParseConfig", nil, nil, err)
		return
	}
	cfg.MaxConns = 4
	cfg.HealthCheckPeriod = 200 * time.Millisecond
	pool, err := pgxpool.ConnectConfig(ctx, cfg)
	if err != nil {
		check("pgxpool: ConnectConfig", nil, nil, err)
		return
	}
	defer pool.Close()
	check("pgxpool: Ping", nil, nil, pool.Ping(ctx))
	a, err := pool.Acquire(ctx)
	if err != nil {
		check("pgxpool: Acquire", nil, nil, err)
		return
	}
	var ok bool
	_, err = a.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(K+2))
	check("pgxpool: pg_advisory_lock on an acquired connection", nil, nil, err)
	err = pool.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", int64(K+2)).Scan(&ok)
	check("pgxpool: the pool's other connection is refused it", ok, false, err)
	err = a.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", int64(K+2)).Scan(&ok)
	check("pgxpool: pg_advisory_unlock", ok, true, err)
	a.Release()
	tx, err := pool.Begin(ctx)
	if err != nil {
		check("pgxpool: Begin", nil, nil, err)
		return
	}
	err = tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", int64(K+3)).Scan(&ok)
	check("pgxpool: pg_try_advisory_xact_lock in pool.Begin", ok, true, err)
	check("pgxpool: Commit", nil, nil, tx.Commit(ctx))
	time.Sleep(500 * time.Millisecond) // a health check or two
	st := pool.Stat()
	check("pgxpool: its connections pass the health checks", st.TotalConns() >= 1, true, nil)
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	libpq(ctx)
	pgxPool(ctx)
	if failed {
		os.Exit(1)
	}
}
