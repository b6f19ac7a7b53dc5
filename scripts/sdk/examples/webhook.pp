// A webhook for the partner's events
resource events "dmarc:index:Webhook" {
  name   = "Acme events"
  url    = "https://hooks.acme.example/dmarc"
  events = ["domain.verified", "report.received"]
}

output webhookSecret {
  value = events.secret
}
