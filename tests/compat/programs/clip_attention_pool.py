"""A CLIP-style image tower: a small conv stem and CLIP's AttentionPool2d, trained
contrastively against learned class embeddings.

AttentionPool2d is CLIP's (ModifiedResNet): the mean of the spatial tokens is prepended as the
query, positional embeddings are added, and F.multi_head_attention_forward runs with separate
q/k/v projections and an output projection (c_proj) to a smaller output_dim than embed_dim.
The loss is CLIP's: cosine similarities scaled by a learned logit_scale, cross-entropy.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionPool2d(nn.Module):
    def __init__(self, spacial_dim: int, embed_dim: int, num_heads: int, output_dim: int = None):
        super().__init__()
        self.positional_embedding = nn.Parameter(
            torch.randn(spacial_dim**2 + 1, embed_dim) / embed_dim**0.5
        )
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.c_proj = nn.Linear(embed_dim, output_dim or embed_dim)
        self.num_heads = num_heads

    def forward(self, x, need_weights=False):
        x = x.flatten(start_dim=2).permute(2, 0, 1)  # NCHW -> (HW)NC
        x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0)  # (HW+1)NC
        x = x + self.positional_embedding[:, None, :].to(x.dtype)  # (HW+1)NC
        x, weights = F.multi_head_attention_forward(
            query=x[:1],
            key=x,
            value=x,
            embed_dim_to_check=x.shape[-1],
            num_heads=self.num_heads,
            q_proj_weight=self.q_proj.weight,
            k_proj_weight=self.k_proj.weight,
            v_proj_weight=self.v_proj.weight,
            in_proj_weight=None,
            in_proj_bias=torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]),
            bias_k=None,
            bias_v=None,
            add_zero_attn=False,
            dropout_p=0,
            out_proj_weight=self.c_proj.weight,
            out_proj_bias=self.c_proj.bias,
            use_separate_proj_weight=True,
            training=self.training,
            need_weights=need_weights,
        )
        if need_weights:
            return x.squeeze(0), weights
        return x.squeeze(0)


class ImageTower(nn.Module):
    def __init__(self, width=16, heads=4, output_dim=8, classes=3):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.avgpool = nn.AvgPool2d(2)
        self.attnpool = AttentionPool2d(4, width, heads, output_dim)
        self.class_embeddings = nn.Parameter(torch.randn(classes, output_dim) * 0.1)
        self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))

    def forward(self, images):
        x = self.avgpool(self.relu(self.bn1(self.conv1(images))))
        features = self.attnpool(x)
        features = features / features.norm(dim=-1, keepdim=True)
        classes = self.class_embeddings / self.class_embeddings.norm(dim=-1, keepdim=True)
        return self.logit_scale.exp() * features @ classes.t()


def make_model():
    return ImageTower()


def train(model, data, steps):
    images = torch.tensor(data["images"])
    labels = torch.tensor(data["labels"], dtype=torch.long)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model.train()
    for step in range(steps):
        batch = slice((step * 4) % len(images), (step * 4) % len(images) + 4)
        logits = model(images[batch])
        loss = F.cross_entropy(logits, labels[batch])
        optimizer.zero_grad()
        loss.backward()
        yield loss
        optimizer.step()
    yield


def evaluate(model, data):
    model.eval()
    images = torch.tensor(data["images"])
    with torch.no_grad():
        logits = model(images)
        x = model.avgpool(model.relu(model.bn1(model.conv1(images))))
        pooled, weights = model.attnpool(x, need_weights=True)
    assert pooled.shape == (len(images), 8) and weights.shape == (len(images), 1, 17)
    return {"logits": logits, "pooled": pooled, "attention": weights}
