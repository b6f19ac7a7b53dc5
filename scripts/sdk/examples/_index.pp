// One customer's organisation, a group, and a domain whose record delegates the policy to the service
resource acme "dmarc:index:Organization" {
  name = "Acme Corp"
}

resource production "dmarc:index:DomainGroup" {
  organizationId = acme.organizationId
  name           = "Production"
}

resource acmeCom "dmarc:index:Domain" {
  organizationId  = acme.organizationId
  groupId         = production.groupId
  domain          = "acme.com"
  setupRecordType = "CNAME"
}

output record {
  value = acmeCom.setupRecord
}
