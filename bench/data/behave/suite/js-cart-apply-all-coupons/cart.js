'use strict';

/**
 * Shopping cart arithmetic for the checkout service.
 *
 * Prices are integers in cents throughout; only formatPrice turns them into
 * a display string. A cart is a plain object so that it can be stored in the
 * session as JSON:
 *
 *   { currency: 'EUR', lines: [{ sku, name, unitPrice, quantity }] }
 */

const TAX_RATES = {
  standard: 0.2,
  reduced: 0.055,
  zero: 0,
};

function createCart(currency = 'EUR') {
  return { currency, lines: [] };
}

function findLine(cart, sku) {
  return cart.lines.find((line) => line.sku === sku);
}

/**
 * Add `quantity` units of `product` to the cart, merging with an existing
 * line for the same SKU.
 */
function addItem(cart, product, quantity = 1) {
  const line = findLine(cart, product.sku);
  if (line) {
    line.quantity += quantity;
  } else {
    cart.lines.push({
      sku: product.sku,
      name: product.name,
      unitPrice: product.price,
      quantity,
    });
  }
  return cart;
}

function removeItem(cart, sku) {
  cart.lines = cart.lines.filter((line) => line.sku !== sku);
  return cart;
}

function subtotal(cart) {
  return cart.lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
}

/**
 * The discount, in cents, that one coupon gives on `amount`.
 * Coupons are { type: 'percent', value: 10 } or { type: 'fixed', value: 500 }.
 */
function couponDiscount(coupon, amount) {
  if (coupon.type === 'percent') {
    return Math.round((amount * coupon.value) / 100);
  }
  if (coupon.type === 'fixed') {
    return Math.min(coupon.value, amount);
  }
  throw new Error(`unknown coupon type: ${coupon.type}`);
}

/**
 * Apply the cart's coupons to `amount` in order, each on what is left after
 * the previous ones. Never goes below zero.
 */
function applyCoupons(amount, coupons) {
  let total = amount;
  if (coupons.length > 0) {
    total -= couponDiscount(coupons[0], total);
  }
  return Math.max(total, 0);
}

function tax(amount, rate = 'standard') {
  if (!(rate in TAX_RATES)) {
    throw new Error(`unknown tax rate: ${rate}`);
  }
  return Math.round(amount * TAX_RATES[rate]);
}

/**
 * Everything the checkout page shows, in cents.
 */
function totals(cart, { coupons = [], taxRate = 'standard' } = {}) {
  const sub = subtotal(cart);
  const discounted = applyCoupons(sub, coupons);
  const taxAmount = tax(discounted, taxRate);
  return {
    subtotal: sub,
    discount: sub - discounted,
    tax: taxAmount,
    total: discounted + taxAmount,
  };
}

function formatPrice(cents, currency = 'EUR') {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const units = Math.floor(abs / 100);
  const rest = String(abs % 100).padStart(2, '0');
  return `${sign}${units}.${rest} ${currency}`;
}

module.exports = {
  TAX_RATES,
  createCart,
  addItem,
  removeItem,
  subtotal,
  couponDiscount,
  applyCoupons,
  tax,
  totals,
  formatPrice,
};
