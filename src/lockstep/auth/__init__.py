"""Identity: signed access tokens, hashed credentials, and the access rules that scope them."""
