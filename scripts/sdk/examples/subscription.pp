// An organisation subscribed to a plan
resource acme "dmarc:index:Organization" {
  name = "Acme Corp"
}

business = invoke("dmarc:index:getPriceId", {
  plan = "Business"
})

resource acmeBusiness "dmarc:index:Subscription" {
  organizationId = acme.organizationId
  priceId        = business.priceId
}

output status {
  value = acmeBusiness.status
}
