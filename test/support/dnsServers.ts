// The BIND 9 and Knot DNS servers of the RFC 2136 tests live with the bench,
// which publishes to BIND too and cannot import test code.
export * from "../../bench/src/dnsServers";
