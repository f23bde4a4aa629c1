"""gradcheck / gradgradcheck: compare analytical gradients with finite differences."""
