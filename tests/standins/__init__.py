"""Stand-ins for what cannot run here (a Kubernetes API server, AWX's API, Cluster API's
controllers) and the relays and counters the tests put between real parts."""
