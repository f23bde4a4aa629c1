"""Higher-level autograd: jacobian, hessian, vjp, jvp, hvp, vhp."""
