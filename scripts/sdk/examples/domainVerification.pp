// A domain published by RFC 2136 and verified by the service
config dnsServer "string" {
  description = "The zone's primary server, host:port"
}

config dnsKeySecret "string" {
  description = "The TSIG key's secret, base64"
}

resource acme "dmarc:index:Organization" {
  name = "Acme Corp"
}

resource production "dmarc:index:DomainGroup" {
  organizationId = acme.organizationId
  name           = "Production"
}

resource acmeExample "dmarc:index:Domain" {
  organizationId = acme.organizationId
  groupId        = production.groupId
  domain         = "acme.example"
}

resource dmarcRecord "dmarc:index:Rfc2136Record" {
  server    = dnsServer
  name      = acmeExample.setupRecord.host
  type      = acmeExample.setupRecord.recordType
  value     = acmeExample.setupRecord.value
  keyName   = "dmarc-update"
  keySecret = dnsKeySecret
}

resource acmeExampleVerified "dmarc:index:DomainVerification" {
  domainId = acmeExample.id
  timeout  = "10m"

  options {
    dependsOn = [dmarcRecord]
  }
}

output verified {
  value = acmeExampleVerified.verified
}
