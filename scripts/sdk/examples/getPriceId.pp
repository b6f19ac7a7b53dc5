// The price id of a plan
business = invoke("dmarc:index:getPriceId", {
  plan = "Business"
})

output priceId {
  value = business.priceId
}
