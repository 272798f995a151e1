// LoopbackDynamoDBLocal starts DynamoDB Local bound to 127.0.0.1 only, or to
// the one address the system property ddblocal.host names (a Docker
// network's gateway, for a container to reach it: make sam-invoke).
//
// DynamoDB Local has no host option and listens on every interface. This
// launcher builds the server from the usual command line, points its Jetty
// connectors at that address before starting it, and exits when its
// standard input closes, so the server never outlives the process that
// started it (a test binary, make dev).
import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public final class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        String host = System.getProperty("ddblocal.host", "127.0.0.1");
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field f = DynamoDBProxyServer.class.getDeclaredField("server");
        f.setAccessible(true);
        Server jetty = (Server) f.get(proxy);
        int bound = 0;
        for (Connector c : jetty.getConnectors()) {
            if (c instanceof ServerConnector) {
                ((ServerConnector) c).setHost(host);
                bound++;
            }
        }
        if (bound == 0) {
            System.err.println("LoopbackDynamoDBLocal: no connector to bind to " + host);
            System.exit(2);
        }
        Thread watchdog = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // drain: only end-of-file matters
                }
            } catch (Exception ignored) {
            }
            System.exit(0);
        }, "stdin-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        proxy.start();
        System.out.println("LoopbackDynamoDBLocal: listening on " + host);
        proxy.join();
    }
}
