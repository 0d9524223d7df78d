import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;

/**
 * One plaintext connection speaking Kafka's framing with the client's own serializers and
 * parsers: a request is a generated *RequestData at a chosen version, an answer is parsed by
 * AbstractResponse.parseResponse, exactly as the Java client's NetworkClient does.
 */
final class RawClient implements AutoCloseable {
    /** The connection was closed or timed out: no answer to parse. */
    static final class NoAnswer extends IOException {
        NoAnswer(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Socket socket = new Socket();
    private final DataInputStream in;
    private final DataOutputStream out;
    private int correlationId;

    RawClient(String host, int port) throws IOException {
        socket.connect(new InetSocketAddress(host, port), 5_000);
        socket.setSoTimeout(30_000);
        in = new DataInputStream(socket.getInputStream());
        out = new DataOutputStream(socket.getOutputStream());
    }

    /** Sends `request` at `version` and returns the answer's bytes (header included). */
    byte[] exchange(RequestHeader header, ApiMessage request) throws IOException {
        return exchange(RequestUtils.serialize(header.data(), header.headerVersion(), request, header.apiVersion()));
    }

    /** Sends a body already encoded (at a version the client's classes may not know). */
    byte[] exchange(RequestHeader header, ByteBuffer body) throws IOException {
        RequestHeader numbered = new RequestHeader(header.data().duplicate().setCorrelationId(++correlationId),
                header.headerVersion());
        ByteBuffer head = MessageUtil.toByteBuffer(numbered.data(), numbered.headerVersion());
        ByteBuffer frame = ByteBuffer.allocate(head.remaining() + body.remaining()).put(head).put(body).flip();
        return exchange(frame);
    }

    private byte[] exchange(ByteBuffer frame) throws IOException {
        try {
            out.writeInt(frame.remaining());
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
            int size = in.readInt();
            byte[] answer = new byte[size];
            in.readFully(answer);
            return answer;
        } catch (IOException e) {
            throw new NoAnswer("no answer (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")", e);
        }
    }

    RequestHeader header(ApiMessage request, short version) {
        return new RequestHeader(ApiKeys.forId(request.apiKey()), version, "floe-java-responses", ++correlationId);
    }

    /** Sends and parses with the client's parser; its exceptions propagate. */
    AbstractResponse send(ApiMessage request, short version) throws IOException {
        RequestHeader header = header(request, version);
        byte[] answer = exchange(header, request);
        return AbstractResponse.parseResponse(ByteBuffer.wrap(answer), header);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
