// A sign-in link for an invited admin
resource acme "dmarc:index:Organization" {
  name = "Acme Corp"
}

resource itTeam "dmarc:index:Invitation" {
  organizationId = acme.organizationId
  email          = "it@acme.example"
  role           = "admin"
}

signIn = invoke("dmarc:index:createMagicLink", {
  userId         = itTeam.userId
  organizationId = acme.organizationId
})

output signInLink {
  value = signIn.url
}
