// A domain group of an organisation
resource acme "dmarc:index:Organization" {
  name = "Acme Corp"
}

resource production "dmarc:index:DomainGroup" {
  organizationId = acme.organizationId
  name           = "Production"
}

output groupId {
  value = production.groupId
}
