"""A variational autoencoder in the manner of the PyTorch examples' VAE.

Reparameterisation with the noise passed in (so both runs draw the same eps), BCE + KL loss,
Adam.
"""

import torch
from torch import nn
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self, input_dim=20, hidden_dim=16, latent_dim=3):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, hidden_dim)
        self.fc21 = nn.Linear(hidden_dim, latent_dim)
        self.fc22 = nn.Linear(hidden_dim, latent_dim)
        self.fc3 = nn.Linear(latent_dim, hidden_dim)
        self.fc4 = nn.Linear(hidden_dim, input_dim)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 20))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 20), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def make_model():
    return VAE()


def train(model, data, steps):
    x = torch.from_numpy(data["x"])
    noise = torch.from_numpy(data["noise"])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for step in range(steps):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(x, noise[step])
        loss = loss_function(recon_batch, x, mu, logvar)
        loss.backward()
        yield loss
        optimizer.step()
    yield


def evaluate(model, data):
    model.eval()
    with torch.no_grad():
        sample = model.decode(torch.from_numpy(data["noise"][0][:4]))
    return {"sample": sample}
