// An admin invited to an organisation
resource acme "dmarc:index:Organization" {
  name = "Acme Corp"
}

resource itTeam "dmarc:index:Invitation" {
  organizationId = acme.organizationId
  email          = "it@acme.example"
  role           = "admin"
}

output userId {
  value = itTeam.userId
}
