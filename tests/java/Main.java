/**
 * Runs one scenario of the Java client suite against a running floe:
 *
 *   java Main <scenario> <host:port> [args...]
 *
 * Scenarios: admin, producer, transactions, consumer, responses, secured (needs a floe with
 * SASL and ACLs; see SecuredScenario), ordered (while a test kills an agent; see
 * OrderedScenario), table (a compacted topic cleaned and restored; needs a floe that runs its
 * jobs often: see TableScenario), batches (batches the cleaner rewrote, read from files: see
 * RewrittenBatches). Each check prints a PASS or FAIL line with its reason;
 * the exit status is 1 when any check failed.
 */
import java.nio.file.Path;

public final class Main {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Main <admin|producer|transactions|consumer|responses|secured|ordered|table|batches> <host:port|dir> [args...]");
            System.exit(2);
        }
        String scenario = args[0];
        String bootstrap = args[1];
        switch (scenario) {
            case "admin":
                new AdminScenario(bootstrap).run();
                break;
            case "producer":
                new ProducerScenario(bootstrap).run();
                break;
            case "transactions":
                new TransactionsScenario(bootstrap).run();
                break;
            case "consumer":
                new ConsumerScenario(bootstrap).run();
                break;
            case "responses":
                Check.run("responses harness ran", () -> new Responses(bootstrap).run());
                break;
            case "ordered":
                new OrderedScenario(bootstrap, args).run();
                break;
            case "secured":
                new SecuredScenario(bootstrap, args).run();
                break;
            case "table":
                new TableScenario(bootstrap).run();
                break;
            case "batches":
                // Here the second argument is a directory of batches, not a broker.
                new RewrittenBatches(Path.of(bootstrap)).run();
                break;
            default:
                System.err.println("unknown scenario " + scenario);
                System.exit(2);
        }
        // Clients' background threads (and a hung call's) must not keep the JVM alive.
        System.exit(Check.summary(scenario));
    }
}
