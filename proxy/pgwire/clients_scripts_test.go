package pgwire

// scriptClients are the clients that run as programs.
func scriptClients() []matrixClient { return nil }
