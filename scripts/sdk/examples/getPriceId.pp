business = invoke("dmarc:index:getPriceId", {
  plan = "Business"
})

output priceId {
  value = business.priceId
}
