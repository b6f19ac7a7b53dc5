// An organisation
resource acme "dmarc:index:Organization" {
  name = "Acme Corp"
}

output organizationId {
  value = acme.id
}
