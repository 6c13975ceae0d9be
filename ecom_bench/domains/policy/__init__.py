"""The store's rule book (E_POLICY): the rule model and its generator, the search over its
documents, the policy tools and how their free-text answers are read."""
