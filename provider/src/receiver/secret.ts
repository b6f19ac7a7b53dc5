import { Webhook } from "standardwebhooks";

/**
 * One signer per accepted secret. Several secrets let a receiver accept both the
 * old and the new secret while `regenerate-secret` rolls out.
 */
export function signersFor(secret: string | readonly string[]): Webhook[] {
  const secrets = typeof secret === "string" ? [secret] : secret;
  if (secrets.length === 0) throw new TypeError("receiver: `secret` must name at least one webhook secret");
  return secrets.map((one, index) => {
    try {
      if (typeof one !== "string") throw new TypeError();
      return new Webhook(one);
    } catch {
      // The library's own message is dropped on purpose: the value must not reach a log, even in part.
      throw new TypeError(
        `receiver: \`secret\`${secrets.length > 1 ? `[${index}]` : ""} is not a webhook secret (expected whsec_ followed by base64)`,
      );
    }
  });
}
