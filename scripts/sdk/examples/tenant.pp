// A whole customer in one block: its organisation, group, plan, domains, admin and webhook
resource globex "dmarc:index:Tenant" {
  name  = "Globex"
  group = "Production"
  plan = {
    name      = "Business"
    frequency = "yearly"
  }
  domains = [
    {
      name            = "globex.example"
      setupRecordType = "CNAME"
    },
    {
      name = "globex-parked.example"
      type = "parked"
    },
  ]
  admins = ["it@globex.example"]
  webhooks = [{
    name   = "Globex events"
    url    = "https://hooks.globex.example/dmarc"
    events = ["domain.verified"]
  }]
}

output organizationId {
  value = globex.organizationId
}

output records {
  value = globex.records
}
