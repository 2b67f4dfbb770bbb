// JDBC (pgjdbc, Debian's libpostgresql-jdbc-java) against leasegate's
// PostgreSQL port, or any server given by PGHOST, PGPORT, PGUSER,
// PGPASSWORD, PGDATABASE. A single-file program, no build tool:
//   java -cp /usr/share/java/postgresql.jar JdbcTest.java
// Prints one `ok`/`not ok` line per check. The prepared statements run past
// pgjdbc's prepareThreshold (5), when the driver switches to named
// server-side statements (and binary results).
import java.sql.*;
import java.util.Objects;
import java.util.Properties;
import org.postgresql.PGStatement;

public class JdbcTest {
    static final String D = "jdbc";
    static final long K = 5000; // this driver's keys: 5000..5009

    static void check(String what, Object got, Object want) {
        if (Objects.equals(got, want)) System.out.println("ok " + D + ": " + what);
        else System.out.println("not ok " + D + ": " + what + ": got " + got + ", want " + want);
    }

    static String env(String k, String d) {
        String v = System.getenv(k);
        return v == null || v.isEmpty() ? d : v;
    }

    static Connection connect(String password) throws SQLException {
        String url = "jdbc:postgresql://" + env("PGHOST", "127.0.0.1") + ":" + env("PGPORT", "5432")
                + "/" + env("PGDATABASE", "locks");
        Properties p = new Properties();
        p.setProperty("user", env("PGUSER", "leasegate"));
        p.setProperty("password", password);
        return DriverManager.getConnection(url, p);
    }

    static Object one(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getObject(1);
            }
        }
    }

    public static void main(String[] argv) throws Exception {
        String pw = env("PGPASSWORD", "");
        Connection a = connect(pw), b = connect(pw);
        check("connect with SCRAM, SELECT 1", one(a, "SELECT 1"), 1);
        try (Statement st = a.createStatement();
             ResultSet rs = st.executeQuery("SELECT pg_advisory_lock(" + K + ")")) {
            check("pg_advisory_lock returns void", rs.getMetaData().getColumnTypeName(1), "void");
        }
        Object tok = one(a, "SELECT leasegate.token(?)", K);
        check("leasegate.token of the held lock is a positive bigint",
                tok instanceof Long && (Long) tok > 0, true);

        check("pg_advisory_unlock returns true", one(a, "SELECT pg_advisory_unlock(?)", K), true);

        // a's lock and unlock, b's try and unlock: each a PreparedStatement run 7 times
        PreparedStatement lockA = a.prepareStatement("SELECT pg_advisory_lock(?)");
        PreparedStatement unlockA = a.prepareStatement("SELECT pg_advisory_unlock(?)");
        PreparedStatement tryB = b.prepareStatement("SELECT pg_try_advisory_lock(?)");
        PreparedStatement unlockB = b.prepareStatement("SELECT pg_advisory_unlock(?)");
        boolean refused = true, unlocked = true, tookOver = true;
        for (int i = 0; i < 7; i++) {
            first(lockA, K);
            refused &= Boolean.FALSE.equals(first(tryB, K));
            unlocked &= Boolean.TRUE.equals(first(unlockA, K));
            tookOver &= Boolean.TRUE.equals(first(tryB, K));
            first(unlockB, K);
        }
        check("another session's try is refused while held (7 times)", refused, true);
        check("pg_advisory_unlock returns true (7 times)", unlocked, true);
        check("then the other session's try succeeds (7 times)", tookOver, true);
        check("past prepareThreshold the driver uses server-prepared statements",
                tryB.unwrap(PGStatement.class).isUseServerPrepare(), true);
        check("unlock of a lock not held: false", one(a, "SELECT pg_advisory_unlock(?)", K), false);

        a.setAutoCommit(false); // BEGIN before the first statement
        one(a, "SELECT pg_advisory_xact_lock(?)", K + 1);
        check("xact lock: another session's try refused in the transaction",
                one(b, "SELECT pg_try_advisory_lock(?)", K + 1), false);
        a.commit();
        a.setAutoCommit(true);
        check("xact lock released at COMMIT", one(b, "SELECT pg_try_advisory_lock(?)", K + 1), true);
        one(b, "SELECT pg_advisory_unlock(?)", K + 1);

        String name = "pg-test-jdbc";
        Object t1 = one(a, "SELECT leasegate.acquire(?, ?)", name, 30000);
        check("leasegate.acquire returns a token", t1 instanceof Long && (Long) t1 > 0, true);
        check("leasegate.acquire by another session: NULL",
                one(b, "SELECT leasegate.acquire(?, ?)", name, 30000), null);
        check("leasegate.release: true", one(a, "SELECT leasegate.release(?)", name), true);
        Object t2 = one(b, "SELECT leasegate.acquire(?, ?)", name, 30000);
        check("the next holder's token is greater", t2 instanceof Long && (Long) t2 > (Long) t1, true);
        one(b, "SELECT leasegate.release(?)", name);

        check("holder takes a lock", one(a, "SELECT pg_try_advisory_lock(?)", K + 2), true);
        a.close();
        for (int i = 0; i < 200 && !Boolean.TRUE.equals(one(b, "SELECT pg_try_advisory_lock(?)", K + 2)); i++)
            Thread.sleep(10);
        check("the holder's disconnect releases it (the other's try succeeds within 2 s)",
                one(b, "SELECT pg_advisory_unlock(?)", K + 2), true);
        b.close();

        try {
            connect("wrong-" + pw).close();
            check("a wrong password is refused: 28P01", "connected", "28P01");
        } catch (SQLException e) {
            check("a wrong password is refused: 28P01", e.getSQLState(), "28P01");
        }
    }

    static Object first(PreparedStatement ps, long key) throws SQLException {
        ps.setLong(1, key);
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getObject(1);
        }
    }
}
