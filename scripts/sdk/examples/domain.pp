// A domain of an organisation, and the DMARC record to publish
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

output dmarcRecordName {
  value = acmeExample.setupRecord.name
}

output dmarcRecordValue {
  value = acmeExample.setupRecord.value
}
