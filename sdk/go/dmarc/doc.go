// Tenants of the DMARC management service for its partners: organisations, domain groups, domains, verification, webhooks, subscriptions, invitations and RFC 2136 DNS records.
package dmarc
