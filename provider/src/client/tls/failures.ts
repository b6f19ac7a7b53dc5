import { CA_FILE_SETTING, describeTrust, type Trust } from "./trust";

// What a certificate refused in a TLS handshake means, and what the reader
// does about it: one row per verdict of Node.js's verification. None is
// retried: a certificate does not change between attempts. Verification is
// never turned off, and no message suggests it.

/** Whose certificate was refused: the service's (maybe re-signed by an inspecting proxy), or an https:// proxy's own. */
export interface CertificateHolder {
  /** As messages name it: "the service", "the proxy https://proxy.corp.example:443". */
  readonly name: string;
  /** The setting or variable whose address names it. */
  readonly addressedBy: string;
}

/** A refused certificate described: what happened, and what to do. */
export interface CertificateFailure {
  says: string;
  advice: string;
}

interface CertificateRow {
  says: string;
  advice: (holder: CertificateHolder, trust: Trust) => string;
}

const NEVER_OFF = "Never turn verification off.";

function trustAdvice(_holder: CertificateHolder, trust: Trust): string {
  const systemStore = trust.readsSystemStore
    ? "install it in the operating system's store (update-ca-certificates on Debian and Ubuntu, the keychain on macOS, the Windows store), which the Pulumi CLI reads too"
    : `install it in the operating system's store and run on Node.js 22.15 or later (Node.js ${process.version} does not read that store)`;
  return (
    `this process trusted ${describeTrust(trust)}. If the certificate (the service's, or a TLS-inspecting proxy's) is signed by your company's CA, trust that CA one of three ways: ` +
    `${systemStore}; or name its PEM file in ${CA_FILE_SETTING}, for this stack or run alone; or in NODE_EXTRA_CA_CERTS, for every Node.js process that pulumi or dmarc-fleet starts. ${NEVER_OFF}`
  );
}

const NOT_TRUSTED: CertificateRow = { says: "not trusted", advice: trustAdvice };

const OUT_OF_DATE: CertificateRow = {
  says: "outside its validity period",
  advice: (holder) =>
    `check this machine's clock; if it is right, ${holder.name}'s certificate must be renewed by its owner. ${NEVER_OFF}`,
};

const CERTIFICATE_ROWS: Readonly<Record<string, CertificateRow>> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: NOT_TRUSTED,
  SELF_SIGNED_CERT_IN_CHAIN: NOT_TRUSTED,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: NOT_TRUSTED,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: NOT_TRUSTED,
  CERT_HAS_EXPIRED: OUT_OF_DATE,
  CERT_NOT_YET_VALID: OUT_OF_DATE,
  ERR_TLS_CERT_ALTNAME_INVALID: {
    says: "for another name",
    advice: (holder) =>
      `address ${holder.name} in ${holder.addressedBy} by a name its certificate carries (the error names them). ${NEVER_OFF}`,
  },
};

/** The failure a refused certificate means, or undefined when `code` is no certificate's verdict. */
export function certificateFailure(
  code: string,
  holder: CertificateHolder,
  trust: () => Trust,
): CertificateFailure | undefined {
  const row = CERTIFICATE_ROWS[code];
  return row && { says: `TLS certificate ${row.says}`, advice: row.advice(holder, trust()) };
}
