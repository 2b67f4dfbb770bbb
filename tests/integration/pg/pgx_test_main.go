// pgx v4 (Debian's golang-github-jackc-pgx-v4-dev, pure Go; extended
// protocol by default: each statement with parameters is prepared and
// described once per connection (its statement cache), then Bind/Execute
// with binary parameters and binary int8/bool results) against leasegate's
// PostgreSQL port, or any server given by PGHOST, PGPORT, PGUSER,
// PGPASSWORD, PGDATABASE (pgx reads them). Prints one `ok`/`not ok` line
// per check. Built offline in GOPATH mode, as run_drivers.sh does:
//
//	GOPATH=/usr/share/gocode GO111MODULE=off go build -o pgx_test pgx_test_main.go
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgx/v4"
)

const D = "pgx"
const K = int64(7000) // this driver's keys: 7000..7009

var ctx = context.Background()

func check(what string, got, want interface{}) {
	if got == want {
		fmt.Printf("ok %s: %s\n", D, what)
	} else {
		fmt.Printf("not ok %s: %s: got %#v, want %#v\n", D, what, got, want)
	}
}

// fail: a check that could not run (the error is what was got)
func fail(what string, err error) {
	fmt.Printf("not ok %s: %s: %v\n", D, what, err)
}

// boolOf: the one bool of a one-row query (QueryRow: the statement cache,
// a binary bool); a failure prints and gives nil
func boolOf(c *pgx.Conn, what, sql string, args ...interface{}) interface{} {
	var v bool
	if err := c.QueryRow(ctx, sql, args...).Scan(&v); err != nil {
		fail(what, err)
		return nil
	}
	return v
}

// int8Of: the one bigint (or NULL: nil) of a one-row query, read in binary
func int8Of(c *pgx.Conn, what, sql string, args ...interface{}) (*int64, error) {
	var v *int64
	err := c.QueryRow(ctx, sql, args...).Scan(&v)
	if err != nil {
		fail(what, err)
	}
	return v, err
}

func connect(what string) *pgx.Conn {
	c, err := pgx.Connect(ctx, "") // "": the PG* variables
	if err != nil {
		fail(what, err)
		os.Exit(1)
	}
	return c
}

func main() {
	a := connect("connect with SCRAM (session a)")
	b := connect("connect with SCRAM (session b)")
	var one int32
	if err := a.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		fail("connect with SCRAM, SELECT 1", err)
	} else {
		check("connect with SCRAM, SELECT 1", one, int32(1))
	}
	check("conn.Ping (an empty statement, ';')", fmt.Sprint(a.Ping(ctx)), "<nil>")

	// Query: the void column's type, as described by the server
	rows, err := a.Query(ctx, "SELECT pg_advisory_lock($1)", K)
	if err != nil {
		fail("pg_advisory_lock returns void (OID 2278)", err)
	} else {
		var oid uint32
		if fd := rows.FieldDescriptions(); len(fd) == 1 {
			oid = fd[0].DataTypeOID
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if rows.Err() != nil {
			fail("pg_advisory_lock returns void (OID 2278)", rows.Err())
		} else {
			check("pg_advisory_lock returns void (OID 2278), one row", fmt.Sprint(oid, " ", n), "2278 1")
		}
	}
	// QueryRow with a parameter: prepared once (a named statement of the
	// cache), a binary int8 parameter and result
	if tok, err := int8Of(a, "leasegate.token", "SELECT leasegate.token($1)", K); err == nil {
		check("leasegate.token (binary int8, a prepared statement) is a positive bigint",
			tok != nil && *tok > 0, true)
	}
	try := "SELECT pg_try_advisory_lock($1)"
	check("another session's try is refused while held", boolOf(b, "try", try, K), false)
	check("pg_advisory_unlock returns true",
		boolOf(a, "unlock", "SELECT pg_advisory_unlock($1)", K), true)
	check("then the other session's try succeeds (the cached statement again)",
		boolOf(b, "try", try, K), true)
	check("and it unlocks", boolOf(b, "unlock", "SELECT pg_advisory_unlock($1)", K), true)
	check("unlock of a lock not held: false",
		boolOf(a, "unlock", "SELECT pg_advisory_unlock($1)", K), false)
	check("the statement cache holds the prepared statements",
		a.StatementCache() != nil && a.StatementCache().Len() >= 2, true)

	if tx, err := a.Begin(ctx); err != nil {
		fail("BEGIN", err)
	} else {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", K+1); err != nil {
			fail("pg_advisory_xact_lock in a transaction", err)
		}
		check("xact lock: another session's try refused in the transaction",
			boolOf(b, "try", try, K+1), false)
		if err := tx.Commit(ctx); err != nil {
			fail("COMMIT", err)
		}
	}
	check("xact lock released at COMMIT", boolOf(b, "try", try, K+1), true)
	boolOf(b, "unlock", "SELECT pg_advisory_unlock($1)", K+1)

	name := "pg-test-pgx"
	acq := "SELECT leasegate.acquire($1, $2)"
	t1, err1 := int8Of(a, "leasegate.acquire", acq, name, 30000)
	if err1 == nil {
		check("leasegate.acquire returns a token", t1 != nil && *t1 > 0, true)
	}
	if t, err := int8Of(b, "leasegate.acquire by another session", acq, name, 30000); err == nil {
		check("leasegate.acquire by another session: NULL", t == nil, true)
	}
	check("leasegate.release: true", boolOf(a, "release", "SELECT leasegate.release($1)", name), true)
	if t2, err := int8Of(b, "leasegate.acquire by the next holder", acq, name, 30000); err == nil {
		check("the next holder's token is greater", t1 != nil && t2 != nil && *t2 > *t1, true)
	}
	boolOf(b, "release", "SELECT leasegate.release($1)", name)

	check("holder takes a lock", boolOf(a, "try", try, K+2), true)
	a.Close(ctx) // Terminate, then the socket closes
	deadline := time.Now().Add(2 * time.Second)
	for boolOf(b, "try", try, K+2) != true && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	check("the holder's disconnect releases it (the other's try succeeds within 2 s)",
		boolOf(b, "unlock", "SELECT pg_advisory_unlock($1)", K+2), true)
	b.Close(ctx)

	cfg, err := pgx.ParseConfig("")
	if err != nil {
		fail("a wrong password is refused: 28P01", err)
		return
	}
	cfg.Password = "wrong-" + os.Getenv("PGPASSWORD")
	if c, err := pgx.ConnectConfig(ctx, cfg); err == nil {
		c.Close(ctx)
		check("a wrong password is refused: 28P01", "connected", "28P01")
	} else {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			check("a wrong password is refused: 28P01", pgErr.Code, "28P01")
		} else {
			fail("a wrong password is refused: 28P01", err)
		}
	}
}
