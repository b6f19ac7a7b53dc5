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

resource acmeExampleVerified "dmarc:index:DomainVerification" {
  domainId = acmeExample.id
  timeout  = "10m"
}

output verified {
  value = acmeExampleVerified.verified
}
