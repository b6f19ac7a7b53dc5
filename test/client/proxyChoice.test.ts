import { describe, expect, it } from "vitest";
import { directFailureAdvice, proxyFailureOf } from "../../provider/src/client/proxy/failures";
import { bypasses, proxyFor } from "../../provider/src/client/proxy/route";

// Which proxy a request goes through, by curl's and Go's rules: no servers,
// only the choice (the requests through real proxies are test/network/).

const SERVICE = new URL("https://api.dmarc.example:443");

describe("NO_PROXY", () => {
  const cases: Array<[string, string, boolean]> = [
    ["https://api.dmarc.example", "*", true],
    ["https://api.dmarc.example", "dmarc.example", true],
    ["https://dmarc.example", "dmarc.example", true],
    ["https://api.dmarc.example", ".dmarc.example", true],
    ["https://dmarc.example", ".dmarc.example", false],
    ["https://api.dmarc.example", "*.dmarc.example", true],
    ["https://notdmarc.example", "dmarc.example", false],
    ["https://API.Dmarc.Example", "api.dmarc.example", true],
    ["https://api.dmarc.example", "other.example, api.dmarc.example", true],
    ["https://api.dmarc.example", "other.example api.dmarc.example", true],
    ["https://api.dmarc.example", "api.dmarc.example:443", true],
    ["https://api.dmarc.example", "api.dmarc.example:8443", false],
    ["https://api.dmarc.example:8443", "api.dmarc.example:8443", true],
    ["https://10.20.30.40", "10.20.30.40", true],
    ["https://10.20.30.40", "10.0.0.0/8", true],
    ["https://10.20.30.40", "10.20.31.0/24", false],
    ["https://10.20.30.40", "10.20.30.40:443", true],
    ["https://10.20.30.40", "10.0.0.0/99", false],
    ["https://[fd00::5]", "fd00::/8", true],
    ["https://[fd00::5]", "[fd00::5]:443", true],
    ["https://[fd00::5]", "10.0.0.0/8", false],
    ["https://api.dmarc.example", "10.0.0.0/8", false],
    ["https://api.dmarc.example", "", false],
  ];
  it.each(cases)("%s with NO_PROXY=%j is direct: %s", (target, list, direct) => {
    expect(bypasses(new URL(target), list)).toBe(direct);
  });
});

describe("choosing the proxy", () => {
  const PROXY = "http://proxy.corp.example:3128";

  it("takes HTTPS_PROXY for an https address, upper case first as Go does", () => {
    const route = proxyFor(SERVICE, {}, { HTTPS_PROXY: PROXY, https_proxy: "http://other:1" });
    expect(route?.url.href).toBe(`${PROXY}/`);
    expect(route?.chosenBy).toBe("HTTPS_PROXY");
    expect(proxyFor(SERVICE, {}, { https_proxy: PROXY })?.chosenBy).toBe("https_proxy");
  });

  it("leaves HTTP_PROXY to http:// addresses, as curl and Go do", () => {
    expect(proxyFor(SERVICE, {}, { HTTP_PROXY: PROXY })).toBeUndefined();
    expect(directFailureAdvice({ HTTP_PROXY: PROXY })).toMatch(/HTTP_PROXY is set, .*set HTTPS_PROXY/);
    expect(directFailureAdvice({})).toMatch(/set HTTPS_PROXY \(or dmarc:httpsProxy\)/);
  });

  it("never proxies loopback, whatever the variables say", () => {
    for (const target of ["https://127.0.0.1:4010", "http://localhost:4010", "https://[::1]:4010"]) {
      expect(proxyFor(new URL(target), { httpsProxy: PROXY }, { HTTPS_PROXY: PROXY, HTTP_PROXY: PROXY })).toBe(
        undefined,
      );
    }
  });

  it("lets the settings stand in for the variables, and noProxy replace NO_PROXY", () => {
    const env = { HTTPS_PROXY: "http://env-proxy:1", NO_PROXY: "api.dmarc.example" };
    expect(proxyFor(SERVICE, {}, env)).toBeUndefined();
    const set = proxyFor(SERVICE, { httpsProxy: PROXY, noProxy: "other.example" }, env);
    expect(set?.url.host).toBe("proxy.corp.example:3128");
    expect(set?.chosenBy).toMatch(/^httpsProxy \(dmarc:httpsProxy, DMARC_HTTPS_PROXY\)$/);
    expect(set?.bypassedBy).toMatch(/^noProxy \(dmarc:noProxy/);
    expect(proxyFor(SERVICE, { noProxy: "*" }, env)).toBeUndefined();
  });

  it("takes a proxy without a scheme as http://, and shows it without its credentials", () => {
    const route = proxyFor(SERVICE, {}, { HTTPS_PROXY: "alice:s3cr3t-Pa55@proxy.corp.example:3128" });
    expect(route?.url.protocol).toBe("http:");
    expect(route?.url.password).toBe("s3cr3t-Pa55");
    expect(route?.shown).toBe("http://***@proxy.corp.example:3128");
  });

  it("refuses an unusable proxy address, naming the variable", () => {
    expect(() => proxyFor(SERVICE, {}, { HTTPS_PROXY: "socks5://proxy:1080" })).toThrow(
      /The proxy in HTTPS_PROXY must be an http:\/\/ or https:\/\/ proxy \(got socks5:\)/,
    );
    expect(() => proxyFor(SERVICE, {}, { https_proxy: "http://proxy:3128/path" })).toThrow(/https_proxy .*no path/);
  });
});

describe("a failure on the way through the proxy", () => {
  const route = proxyFor(SERVICE, {}, { HTTPS_PROXY: "http://bob:pw-Secret-99@proxy.corp.example:3128" });
  if (route === undefined) throw new Error("a proxy was expected");
  const cases: Array<[string, string, string, boolean, RegExp]> = [
    ["407", "", "Proxy response (407) !== 200 when HTTP Tunneling", true, /credentials \(407/],
    ["403", "", "Proxy response (403) !== 200 when HTTP Tunneling", true, /refused by its rules/],
    ["502", "", "Proxy response (502) !== 200 when HTTP Tunneling", false, /could not reach the service/],
    ["down", "ECONNREFUSED", "connect ECONNREFUSED 10.9.9.9:3128", false, /could not be reached/],
  ];
  it.each(cases)(
    "%s names the proxy and its variable, retried only where it can help",
    (_, code, message, permanent, says) => {
      const failure = proxyFailureOf(route, code, message);
      expect(failure.message).toMatch(says);
      expect(failure.message).toContain("the proxy http://***@proxy.corp.example:3128 (chosen by HTTPS_PROXY)");
      expect(failure.message).not.toContain("pw-Secret-99");
      expect(failure.permanent).toBe(permanent);
      expect(failure.advice).toMatch(/NO_PROXY/);
    },
  );
});
