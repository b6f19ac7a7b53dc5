import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ask } from "../../scripts/build/process.mjs";

// A company's CA of the test's own and a certificate it signed, made with
// openssl into a folder of the test's: what a partner's service (or an
// https:// proxy) presents behind a company that runs its own CA.

export interface TestCertificates {
  /** The CA's certificate (PEM): what NODE_EXTRA_CA_CERTS, caFile or a system store is given. */
  caFile: string;
  /** The signed certificate and its key (PEM), for `names`. */
  certFile: string;
  keyFile: string;
}

/** Runs openssl; it fails saying what openssl said. */
function openssl(args: string[]): void {
  const answer = ask("openssl", args);
  if (!answer.ok) throw new Error(`openssl ${args.join(" ")} failed: ${answer.said}`);
}

/** A CA named "Test Company Root CA" and a server certificate it signed for `names` (DNS names and IP addresses). */
export function makeCertificates(folder: string, names: { dns: string[]; ip: string[] }): TestCertificates {
  const at = (name: string) => join(folder, name);
  const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    ["req", "-x509", ...key, "-keyout", at("ca.key"), "-out", at("ca.pem"), "-days", "2"].concat([
      "-subj",
      "/CN=Test Company Root CA",
    ]),
  );
  openssl([
    "req",
    ...key,
    "-keyout",
    at("service.key"),
    "-out",
    at("service.csr"),
    "-subj",
    `/CN=${names.dns[0] ?? names.ip[0]}`,
  ]);
  const altNames = [...names.dns.map((name) => `DNS:${name}`), ...names.ip.map((address) => `IP:${address}`)];
  writeFileSync(
    at("service.ext"),
    `subjectAltName=${altNames.join(",")}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  openssl(
    ["x509", "-req", "-in", at("service.csr"), "-CA", at("ca.pem"), "-CAkey", at("ca.key"), "-CAcreateserial"].concat([
      "-out",
      at("service.pem"),
      "-days",
      "2",
      "-extfile",
      at("service.ext"),
    ]),
  );
  return { caFile: at("ca.pem"), certFile: at("service.pem"), keyFile: at("service.key") };
}
