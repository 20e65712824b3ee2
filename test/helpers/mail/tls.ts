/**
 * A self-signed certificate for the test mail servers, made at test time with openssl: EC P-256
 * (fast to make), valid two days, for `localhost` and 127.0.0.1. The certificate is its own CA, so a
 * client given `ca: certPem` verifies the servers fully (host name included).
 */
import { chmod, readFile } from "node:fs/promises";
import { join } from "node:path";
import { runCommand } from "./processes.js";

/** Paths of the key and certificate files and the certificate's PEM text. */
export interface TestCertificate {
  keyFile: string;
  certFile: string;
  certPem: string;
}

/** Writes `key.pem` and `cert.pem` into `dir`. @throws when openssl fails */
export async function makeCertificate(dir: string): Promise<TestCertificate> {
  const keyFile = join(dir, "key.pem");
  const certFile = join(dir, "cert.pem");
  await runCommand("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", keyFile, "-out", certFile, "-days", "2", "-subj", "/CN=localhost",
    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
  ]);
  // Dovecot may run as another user than the tests (nobody under root): a test key may be world-readable.
  await chmod(keyFile, 0o644);
  return { keyFile, certFile, certPem: await readFile(certFile, "utf8") };
}
