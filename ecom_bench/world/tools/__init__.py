"""The shopping core's tool groups (catalogue, cart, bundle, recommendations, conversation); each
domain's own live beside its data (`ecom_bench.domains.<domain>.tools`). An environment names the
groups it needs (`Environment.toolkits`)."""
