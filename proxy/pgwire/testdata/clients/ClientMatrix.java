// The client matrix's pgjdbc report (see clients_test.go): DatabaseMetaData
// discovers the schema, a PreparedStatement binds typed parameters, a
// fetch size with autocommit off reads a portal n rows at a time (the
// driver's log shows each Execute), and CopyManager copies out.
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.postgresql.PGConnection;
import org.postgresql.util.PSQLException;

public class ClientMatrix {
    // executes counts the driver's Execute messages, as its protocol log
    // records them.
    static int executes;
    static final Logger DRIVER_LOG = Logger.getLogger("org.postgresql");

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/countwall?sslmode=disable";
        try (Connection conn = DriverManager.getConnection(url, args[2], args[3])) {
            schema(conn);
            count(conn);
            cursor(conn);
            StringWriter out = new StringWriter();
            conn.unwrap(PGConnection.class).getCopyAPI().copyOut(
                "COPY (SELECT sex, COUNT(*) FROM visits GROUP BY sex ORDER BY sex) TO STDOUT WITH (FORMAT csv, HEADER true)", out);
            System.out.println("copy: " + String.join("|", out.toString().strip().split("\n")));
            try (Statement st = conn.createStatement()) {
                st.executeQuery("SELECT score FROM visits");
                System.out.println("refused: no error");
            } catch (PSQLException e) {
                System.out.println("refused: " + e.getSQLState() + " " + e.getServerErrorMessage().getMessage());
            }
        }
    }

    static void schema(Connection conn) throws SQLException {
        DatabaseMetaData md = conn.getMetaData();
        List<String> words = new ArrayList<>();
        try (ResultSet rs = md.getTables(null, "public", "%", new String[] {"TABLE"})) {
            while (rs.next()) words.add(rs.getString("TABLE_NAME"));
        }
        try (ResultSet rs = md.getColumns(null, "public", "visits", "%")) {
            while (rs.next()) words.add(rs.getString("COLUMN_NAME") + ":" + rs.getString("TYPE_NAME"));
        }
        System.out.println("schema: " + String.join(" ", words));
    }

    static void count(Connection conn) throws SQLException {
        try (PreparedStatement ps = conn.prepareStatement("SELECT COUNT(*) FROM visits WHERE age > ? AND sex = ? AND score > ?")) {
            ps.setInt(1, 25);
            ps.setString(2, "F");
            ps.setDouble(3, 2.5);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                System.out.println("count: " + rs.getLong(1));
            }
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT COUNT(*) FROM visits WHERE sex = ?")) {
            ps.setNull(1, Types.VARCHAR);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                System.out.println("null: " + rs.getLong(1));
            }
        } catch (PSQLException e) {
            System.out.println("null: " + e.getSQLState());
        }
    }

    static void cursor(Connection conn) throws SQLException {
        Handler counter = new Handler() {
            public void publish(LogRecord r) {
                if (r.getMessage() != null && r.getMessage().contains("FE=> Execute")) executes++;
            }
            public void flush() {}
            public void close() {}
        };
        DRIVER_LOG.setLevel(Level.FINEST);
        DRIVER_LOG.addHandler(counter);
        List<String> chunks = new ArrayList<>();
        List<String> rows = new ArrayList<>();
        String types = "";
        conn.setAutoCommit(false);
        try (Statement st = conn.createStatement()) {
            st.setFetchSize(6);
            try (ResultSet rs = st.executeQuery("SELECT age, COUNT(*) FROM visits GROUP BY age ORDER BY age")) {
                int chunk = 0, size = 0;
                while (rs.next()) {
                    if (executes != chunk && size > 0) {
                        chunks.add(String.valueOf(size));
                        size = 0;
                    }
                    chunk = executes;
                    size++;
                    Object age = rs.getObject(1), n = rs.getObject(2);
                    if (types.isEmpty()) types = age.getClass().getSimpleName() + " " + n.getClass().getSimpleName();
                    rows.add(age + "=" + n);
                }
                if (size > 0) chunks.add(String.valueOf(size));
            }
            conn.commit();
            System.out.println("chunks: " + String.join(" ", chunks));
            System.out.println("rows: " + String.join(" ", rows));
            System.out.println("types: " + types);
        } catch (PSQLException e) {
            conn.rollback();
            System.out.println("chunks: " + e.getSQLState() + " " + e.getMessage());
            System.out.println("rows: " + e.getSQLState() + " " + e.getMessage());
            System.out.println("types: " + e.getSQLState());
        } finally {
            DRIVER_LOG.removeHandler(counter);
            DRIVER_LOG.setLevel(Level.INFO);
            conn.setAutoCommit(true);
        }
    }
}
