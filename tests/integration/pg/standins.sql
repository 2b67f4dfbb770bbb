-- Stand-ins for leasegate's own SQL functions, created in the throw-away
-- PostgreSQL cluster of run_drivers.sh (PG_TARGET=postgres) so that every
-- driver program runs unchanged against real PostgreSQL and against
-- leasegate. They mimic the types and the outcomes only:
--   leasegate.acquire(name text, lease_ms int) -> bigint: a token, or NULL
--       when another session holds the name (no lease: held until release
--       or the end of the session; names are hashed to the (int, int) space)
--   leasegate.release(name text) -> bool
--   leasegate.token(key bigint) -> bigint: the token of an advisory lock
--       this session holds (NULL otherwise); the first call for a key takes
--       a token, kept in a session setting: the same one while held (and,
--       unlike leasegate's, again after an unlock and a new lock)
-- Tokens come from one sequence, so they grow as fencing tokens do.
CREATE SCHEMA leasegate;
CREATE SEQUENCE leasegate.tokens;
CREATE FUNCTION leasegate.acquire(name text, lease_ms int) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
	SELECT CASE WHEN pg_try_advisory_lock(19527, hashtext(name))
		THEN nextval('leasegate.tokens') END
$$;
CREATE FUNCTION leasegate.release(name text) RETURNS bool
LANGUAGE sql VOLATILE AS $$ SELECT pg_advisory_unlock(19527, hashtext(name)) $$;
CREATE FUNCTION leasegate.token(key bigint) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
	SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
		AND pid = pg_backend_pid() AND granted AND objsubid = 1
		AND (classid::bigint << 32 | objid::bigint) = key)
	THEN coalesce(nullif(current_setting('leasegate.token_' || replace(key::text, '-', 'm'), true), ''),
		set_config('leasegate.token_' || replace(key::text, '-', 'm'),
			nextval('leasegate.tokens')::text, false))::bigint END
$$;
GRANT USAGE ON SCHEMA leasegate TO PUBLIC;
GRANT USAGE ON SEQUENCE leasegate.tokens TO PUBLIC;
