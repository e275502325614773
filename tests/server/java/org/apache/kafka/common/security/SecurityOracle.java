package org.apache.kafka.common.security;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.security.ssl.SslPrincipalMapper;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;

/**
 * kafkalog's test oracle: Kafka's own classes answering the questions the security tests
 * ask of kafkalog's Python twins. One command per line on stdin (tab-separated), one
 * answer line on stdout ("OK ..." or "EXC <exception>: <message>"). In Kafka's package so
 * that the package-private JaasConfig can be used.
 *
 *   jaas64 BASE64(TEXT)            JaasConfig's entries
 *   authorizer SUPER ALLOW         a new StandardAuthorizer (super.users, allow.everyone...)
 *   acl ID RT NAME PT PRINC HOST OP PERM
 *   authorize PRINC HOST OP RT [NAME]   one decision (no NAME: authorizeByResourceType)
 *   dn PEMFILE RULES               X500Principal.getName() | SslPrincipalMapper's name
 *   hashset ITEM...                new ArrayList<>(new HashSet<>(items))
 */
public class SecurityOracle {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StandardAuthorizer auth = null;
        String line;
        while ((line = in.readLine()) != null) {
            String[] p = line.split("\t", -1);
            String out;
            try {
                switch (p[0]) {
                    case "jaas64": {
                        String text = new String(java.util.Base64.getDecoder().decode(p[1]), StandardCharsets.UTF_8);
                        JaasConfig c = new JaasConfig("KafkaServer", text);
                        StringBuilder b = new StringBuilder();
                        for (AppConfigurationEntry e : c.getAppConfigurationEntry("KafkaServer")) {
                            b.append(e.getLoginModuleName()).append('|').append(e.getControlFlag()).append('|')
                                .append(new TreeMap<>(e.getOptions())).append(';');
                        }
                        out = "OK " + b;
                        break;
                    }
                    case "authorizer": {
                        auth = new StandardAuthorizer();
                        Map<String, Object> cfg = new HashMap<>();
                        if (!p[1].isEmpty()) cfg.put("super.users", p[1]);
                        cfg.put("allow.everyone.if.no.acl.found", p[2]);
                        auth.configure(cfg);
                        auth.withPluginMetrics(new org.apache.kafka.common.metrics.internals.PluginMetricsImpl(
                            new org.apache.kafka.common.metrics.Metrics(), Map.of()));
                        auth.completeInitialLoad();
                        out = "OK";
                        break;
                    }
                    case "acl": {
                        auth.addAcl(Uuid.fromString(p[1]), new StandardAcl(
                            ResourceType.fromCode(Byte.parseByte(p[2])), p[3],
                            PatternType.fromCode(Byte.parseByte(p[4])), p[5], p[6],
                            AclOperation.fromCode(Byte.parseByte(p[7])),
                            AclPermissionType.fromCode(Byte.parseByte(p[8]))));
                        out = "OK";
                        break;
                    }
                    case "authorize": {
                        String[] pp = p[1].split(":", 2);
                        final KafkaPrincipal principal = new KafkaPrincipal(pp[0], pp[1]);
                        final InetAddress address = InetAddress.getByName(p[2]);
                        AuthorizableRequestContext ctx = new AuthorizableRequestContext() {
                            public String listenerName() { return "TEST"; }
                            public SecurityProtocol securityProtocol() { return SecurityProtocol.PLAINTEXT; }
                            public KafkaPrincipal principal() { return principal; }
                            public InetAddress clientAddress() { return address; }
                            public int requestType() { return 0; }
                            public int requestVersion() { return 0; }
                            public String clientId() { return "oracle"; }
                            public int correlationId() { return 0; }
                        };
                        AclOperation op = AclOperation.fromCode(Byte.parseByte(p[3]));
                        ResourceType rt = ResourceType.fromCode(Byte.parseByte(p[4]));
                        if (p.length > 5) {
                            Action action = new Action(op, new ResourcePattern(rt, p[5], PatternType.LITERAL), 1, false, false);
                            out = "OK " + auth.authorize(ctx, List.of(action)).get(0);
                        } else {
                            out = "OK " + auth.authorizeByResourceType(ctx, op, rt);
                        }
                        break;
                    }
                    case "dn": {
                        CertificateFactory f = CertificateFactory.getInstance("X.509");
                        X509Certificate c;
                        try (FileInputStream s = new FileInputStream(p[1])) {
                            c = (X509Certificate) f.generateCertificate(s);
                        }
                        String name = c.getSubjectX500Principal().getName();
                        String mapped;
                        try {
                            mapped = SslPrincipalMapper.fromRules(p[2]).getName(name);
                        } catch (Exception e) {
                            mapped = "EXC " + e.getClass().getSimpleName();
                        }
                        out = "OK " + name + "\t" + mapped;
                        break;
                    }
                    case "hashset": {
                        out = "OK " + String.join("\t", new ArrayList<>(new HashSet<>(Arrays.asList(p).subList(1, p.length))));
                        break;
                    }
                    default:
                        out = "EXC IllegalArgumentException: unknown command " + p[0];
                }
            } catch (Throwable t) {
                out = "EXC " + t.getClass().getSimpleName() + ": " + t.getMessage();
            }
            System.out.println(out.replace("\\", "\\\\").replace("\n", "\\n"));
            System.out.flush();
        }
    }
}
