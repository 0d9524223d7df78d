import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** PASS/FAIL bookkeeping shared by the scenarios: every check prints one line with its reason. */
final class Check {
    static int passed;
    static int failed;

    interface Body {
        void run() throws Exception;
    }

    /** Runs one named check: PASS when it returns, FAIL with the cause when it throws. */
    static void run(String name, Body body) {
        // FLOE_JAVA_CHECK=<text> runs only the checks whose names contain it (a closer look).
        String only = System.getenv("FLOE_JAVA_CHECK");
        if (only != null && !name.contains(only)) {
            return;
        }
        long start = System.nanoTime();
        try {
            body.run();
            passed++;
            System.out.printf("PASS %s (%d ms)%n", name, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        } catch (Throwable t) {
            fail(name, describe(t));
        }
        System.out.flush();
    }

    static void fail(String name, String why) {
        failed++;
        System.out.println("FAIL " + name + ": " + why);
        System.out.flush();
    }

    static void info(String line) {
        System.out.println("     " + line);
        System.out.flush();
    }

    static void that(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    static void eq(Object expected, Object actual, String what) {
        if (expected == null ? actual != null : !expected.equals(actual)) {
            throw new AssertionError(what + ": expected " + expected + ", got " + actual);
        }
    }

    /**
     * A failure's class and message, through ExecutionException wrappers, with the top frames
     * of a NullPointerException or other runtime error (they say which response field was
     * missing inside the client).
     */
    static String describe(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        StringBuilder out = new StringBuilder(t.getClass().getName());
        if (t.getMessage() != null) {
            out.append(": ").append(t.getMessage());
        }
        if (t instanceof RuntimeException && !(t instanceof org.apache.kafka.common.KafkaException)) {
            StackTraceElement[] frames = t.getStackTrace();
            for (int i = 0; i < Math.min(4, frames.length); i++) {
                out.append("\n       at ").append(frames[i]);
            }
        }
        Throwable cause = t.getCause();
        if (cause != null && cause != t) {
            out.append("\n     caused by ").append(describe(cause));
        }
        return out.toString();
    }

    static int summary(String scenario) {
        System.out.printf("%s: %d passed, %d failed%n", scenario, passed, failed);
        return failed == 0 ? 0 : 1;
    }
}
