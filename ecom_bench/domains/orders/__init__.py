"""The customer's orders and returns (E_TRACK, E_RETURN): records, store rules, references,
the order history and its generator, and the order tools."""
